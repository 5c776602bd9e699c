// The addon must load on glibc 2.28. glibc 2.34 moved libdl's functions into libc under a new
// symbol version; binding to the original version keeps the requirement at the old one (on a
// newer glibc it is libc's compatibility symbol, on an older one libdl's, which Node loads).
// Include this before any call to dlopen or dladdr.
#pragma once

#if defined(__GLIBC__)
#if defined(__x86_64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dladdr,dladdr@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.17");
__asm__(".symver dladdr,dladdr@GLIBC_2.17");
#endif
#endif
