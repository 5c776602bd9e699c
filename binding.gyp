{
  "targets": [
    {
      "target_name": "procpin",
      "sources": [
        "native/binding.cc",
        "native/core/sys.cc",
        "native/core/cgroup_rmdir.cc",
        "native/primitives.cc",
        "native/flock_wait.cc",
        "native/flock/waiter.cc",
        "native/core/flock_wake.cc",
        "native/core/spawn.cc",
        "native/child/handle.cc",
        "native/child/leader.cc",
        "native/child/orphan.cc",
        "native/child/pidfd.cc",
        "native/child/spawn_args.cc",
        "native/child/wait.cc",
        "native/child/watch.cc",
        "native/endkill.cc",
        "native/held_fd.cc",
        "native/core/sweep.cc",
        "native/core/sweep_candidate.cc",
        "native/core/sweep_create.cc",
        "native/core/sweep_fs.cc",
        "native/core/sweep_hook.cc",
        "native/core/sweep_tree.cc",
        "native/core/socket_probe.cc",
        "native/core/liveness.cc",
        "native/sweep.cc",
        "native/tty.cc",
        "native/scan.cc",
        "native/core/dir.cc",
        "native/core/proc.cc",
        "native/core/scan.cc",
        "native/core/tty.cc"
      ],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags": ["-Wall", "-Wextra", "-Werror", "-fstack-protector-strong", "-fvisibility=hidden", "-fno-exceptions"],
      "cflags_cc": ["-std=gnu++17", "-Wall", "-Wextra", "-Werror", "-fstack-protector-strong", "-fvisibility=hidden", "-fno-exceptions"],
      "ldflags": ["-Wl,-z,relro,-z,now"],
      "libraries": ["-ldl"],
      "conditions": [
        ["'<!(node -p \"process.env.PROCPIN_SANITIZE || ''\")'!=''", {
          "cflags": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"],
          "cflags_cc": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"],
          "ldflags": ["-fsanitize=address,undefined"]
        }],
        ["'<!(node -p \"process.env.PROCPIN_TEST_HOOKS || ''\")'!=''", {
          "defines": ["PROCPIN_TEST_HOOKS"]
        }]
      ]
    },
    {
      "target_name": "procpin-init",
      "type": "executable",
      "sources": ["native/init/procpin-init.c", "native/init/outer.c"],
      "defines": ["_GNU_SOURCE"],
      "cflags": ["-Wall", "-Wextra", "-Werror", "-fstack-protector-strong", "-O2", "-std=gnu11", "-fPIE"],
      "ldflags": ["-Wl,-z,relro,-z,now", "<!@(sh native/init/link-flags.sh)"],
      "conditions": [
        ["'<!(node -p \"process.env.PROCPIN_TEST_HOOKS || ''\")'!=''", {
          "defines": ["PROCPIN_TEST_HOOKS"]
        }]
      ]
    }
  ]
}
