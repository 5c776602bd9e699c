#!/usr/bin/env node
// Carries the SPEC rule ids of scripts/rules.mjs into the test names: each test that tests a
// rule gets ` [id]` at the end of its name, so that searching for an id finds the rule's
// tests. The name that is matched is the name's literal as it stands in the source, a template
// literal included.
//
//   node scripts/tag-tests.mjs            dry run: print each test it would tag; exit 1 when a
//                                         name matches no test or more than one
//   node scripts/tag-tests.mjs --write    tag the names in place (run it again and nothing changes)
//   node scripts/tag-tests.mjs --docs     write docs/rules.md from scripts/rules.mjs
//   node scripts/tag-tests.mjs --check    exit 1 unless every rule has a tagged test and every
//                                         tag in a test name is a known id
//   node scripts/tag-tests.mjs --untagged list the tests that no rule names (to give them one)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RULES } from './rules.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2] ?? '--dry-run';
if (!['--dry-run', '--write', '--docs', '--check', '--untagged'].includes(mode)) {
  console.error(
    'usage: node scripts/tag-tests.mjs [--dry-run | --write | --docs | --check | --untagged]',
  );
  process.exit(2);
}

/** Every test file, relative to the root, in name order. */
function testFiles() {
  return readdirSync(join(root, 'test'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.mjs') && !f.includes('node_modules') && !f.startsWith('.tmp'))
    .sort()
    .map((f) => join('test', f));
}

/** Where the string literal that opens at `start` ends (the index of its closing quote). */
function literalEnd(src, start) {
  const q = src[start];
  let depth = 0;
  for (let i = start + 1; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      i++;
    } else if (q === '`' && depth === 0 && c === '$' && src[i + 1] === '{') {
      depth = 1;
      i++;
    } else if (depth > 0) {
      if (c === '{') depth++;
      else if (c === '}') depth--;
    } else if (c === q) {
      return i;
    }
  }
  return -1;
}

/**
 * The name literals of every test(…)/it(…)/describe(…)/t.test(…) call of a file (not suite(…):
 * test/reliab/reliab-pidreuse.test.mjs has a function of its own by that name).
 */
function testNames(file) {
  const src = readFileSync(join(root, file), 'utf8');
  const names = [];
  const call = /(?<![\w.$])(?:t\.test|test|it|describe)\(\s*(?=['"`])/g;
  for (let m; (m = call.exec(src));) {
    const start = m.index + m[0].length;
    const end = literalEnd(src, start);
    if (end < 0) continue;
    const line = src.slice(0, start).split('\n').length;
    const raw = src.slice(start, end + 1);
    // The name as it was before any tag, so that a second run matches the same tests.
    const bare = raw.replace(/ \[(?:F|C|L1|L2|L2b|L3a|L3b|CLI|K|P|A)\.[a-z0-9.-]+\]/g, '');
    names.push({ file, start, end, line, raw, bare });
  }
  return names;
}

const all = testFiles().flatMap(testNames);
const tagOf = (id) => `[${id}]`;
const ID = /\[((?:F|C|L1|L2|L2b|L3a|L3b|CLI|K|P|A)\.[a-z0-9.-]+)\]/;

/**
 * A name's text without its opening quote and with escaped quotes plain, so that a prefix finds
 * its test whichever quotes the formatter chose for the literal.
 */
const unquoted = (literal) => literal.replace(/^['"`]/, '').replace(/\\(['"`])/g, '$1');

/** For each rule and each of its names, the tests it names (or the trouble). */
function resolve() {
  const found = [];
  const trouble = [];
  const pending = [];
  const ids = new Set();
  for (const r of RULES) {
    if (ids.has(r.id)) trouble.push(`${r.id}: the id is used twice`);
    ids.add(r.id);
    const names = [
      ...r.tests.map((prefix) => ({ prefix, later: false })),
      ...(r.pending ?? []).map((prefix) => ({ prefix, later: true })),
    ];
    for (const { prefix, later } of names) {
      const hits = all.filter((n) => unquoted(n.bare).startsWith(unquoted(prefix)));
      if (hits.length >= 1) for (const name of hits) found.push({ rule: r, name });
      else if (hits.length === 0 && later) pending.push(`${r.id}: ${prefix}`);
      else
        trouble.push(
          `${r.id}: ${prefix} names ${hits.length} tests${hits.map((h) => `\n    ${h.file}:${h.line}`).join('')}`,
        );
    }
  }
  return { found, trouble, pending };
}

if (mode === '--docs') {
  const { found, pending } = resolve();
  const rows = RULES.map((r) => {
    const files = [...new Set(found.filter((f) => f.rule === r).map((f) => `\`${f.name.file}\``))];
    const later = pending.some((p) => p.startsWith(`${r.id}: `)) ? ' (more pending)' : '';
    const where = files.length ? files.join(', ') + later : later ? 'pending' : '—';
    return `| \`${r.id}\` | ${r.rule.replace(/\|/g, '\\|')} | ${r.section} | ${where} |`;
  });
  const md = `# SPEC rules and their tests

Each rule of the SPEC has a short id: \`<section>.<subject>[.<aspect>]\`. The sections are \`F\` (the
three facts), \`C\` (conventions), \`L1\`, \`L2\`, \`L2b\`, \`L3a\` (groups, the supervisor's end,
containment), \`L3b\`, \`CLI\`, \`K\` (kernel floor and fallbacks), \`P\` (packaging) and \`A\` (the
layout that docs/architecture.md describes, held by build tests). The test names carry these ids at their end (\`… [L3a.stop.once]\`), so a search for an id finds the tests
of its rule: \`grep -rn 'L3a.stop.once' test/\`.

The list lives in \`scripts/rules.mjs\`, where each rule names its tests by the start of the
test's name. This table is generated from it by \`node scripts/tag-tests.mjs --docs\`. To tag
the test names, run \`node scripts/tag-tests.mjs --write\`; \`--check\` verifies that every rule
has a tagged test. A new rule gets an id there and its test carries the id. A rule marked
*pending* names tests that arrive with work being merged now.

${RULES.length} rules, ${found.length} tests.

| id | rule | SPEC section | tested in |
|---|---|---|---|
${rows.join('\n')}
`;
  writeFileSync(join(root, 'docs', 'rules.md'), md);
  console.log(`docs/rules.md: ${RULES.length} rules, ${found.length} tests`);
  process.exit(0);
}

if (mode === '--untagged') {
  const { found } = resolve();
  const named = new Set(found.map((f) => `${f.name.file}:${f.name.start}`));
  const rest = all.filter((n) => !named.has(`${n.file}:${n.start}`) && !ID.test(n.raw));
  for (const n of rest) console.log(`${n.file}:${n.line}\t${n.raw.slice(0, 110)}`);
  console.log(`${rest.length} of ${all.length} tests carry no rule id`);
  process.exit(0);
}

if (mode === '--check') {
  const known = new Set(RULES.map((r) => r.id));
  const problems = [];
  for (const n of all) {
    for (const [, id] of n.raw.matchAll(new RegExp(ID, 'g'))) {
      if (!known.has(id)) problems.push(`${n.file}:${n.line}: unknown rule id ${id}`);
    }
  }
  const { pending } = resolve();
  for (const r of RULES) {
    if (all.some((n) => n.raw.includes(tagOf(r.id)))) continue;
    if (r.tests.length === 0 && pending.some((p) => p.startsWith(`${r.id}: `)))
      console.log(`${r.id}: pending`);
    else problems.push(`${r.id}: no test name carries it`);
  }
  for (const p of problems) console.error(p);
  console.log(`${RULES.length} rules; ${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}

const { found, trouble, pending } = resolve();
for (const t of trouble) console.error(`not found: ${t}`);
for (const p of pending) console.error(`pending (comes with the merge): ${p}`);
// Inserts go from the end of each file to its start, so earlier offsets stay right.
const byFile = new Map();
for (const f of found) {
  const list = byFile.get(f.name.file) ?? [];
  list.push(f);
  byFile.set(f.name.file, list);
}
let tagged = 0;
let already = 0;
for (const [file, list] of byFile) {
  let src = readFileSync(join(root, file), 'utf8');
  // Several rules may tag one test: gather its ids, in the order of RULES.
  const perName = new Map();
  for (const f of list) {
    const ids = perName.get(f.name.end) ?? { name: f.name, ids: [] };
    ids.ids.push(f.rule.id);
    perName.set(f.name.end, ids);
  }
  for (const { name, ids } of [...perName.values()].sort((a, b) => b.name.end - a.name.end)) {
    const missing = ids.filter((id) => !name.raw.includes(tagOf(id)));
    already += ids.length - missing.length;
    if (missing.length === 0) continue;
    const suffix = missing.map((id) => ` ${tagOf(id)}`).join('');
    tagged += missing.length;
    if (mode === '--write') src = src.slice(0, name.end) + suffix + src.slice(name.end);
    else console.log(`${file}:${name.line}\t${missing.join(' ')}\t${name.raw.slice(0, 90)}`);
  }
  if (mode === '--write') writeFileSync(join(root, file), src);
}
const untested = RULES.filter((r) => !found.some((f) => f.rule === r)).map((r) => r.id);
console.log(
  `${RULES.length} rules; ${tagged} tag(s) ${mode === '--write' ? 'written' : 'to write'}, ${already} already there; ` +
    `${trouble.length} name(s) not found${untested.length ? `; rules with no test: ${untested.join(', ')}` : ''}`,
);
console.log(`(${all.length} tests read in ${relative(root, join(root, 'test'))}/)`);
process.exit(trouble.length ? 1 : 0);
