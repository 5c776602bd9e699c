// The SPEC's rules, each with a short id, and the tests that test it today, named by the start of
// the test's name as it is written in the source (a template literal's `${…}` included).
// scripts/tag-tests.mjs appends ` [id]` to those names and writes docs/rules.md from this list,
// so that a search for an id finds the rule's tests.
//
// Id grammar: <section>.<subject>[.<aspect>], lowercase, dash-separated words. Sections: F (the
// three facts), C (conventions), L1, L2, L2b, L3a (groups, the supervisor's end, containment),
// L3b, CLI, K (kernel floor and fallbacks), P (packaging), A (the layout, docs/architecture.md).

/**
 * `pending`: names of tests that arrive with the branches merged together with this list (the
 * core split, the child split, containment, the lib/ split); until then they are not found, and
 * that is no error; found, they are tagged as `tests` are.
 * @typedef {{ id: string, rule: string, section: string, tests: string[], pending?: string[] }} Rule
 */

// The rules live by SPEC layer in scripts/rules/*.mjs; this list joins them in the SPEC's order.
import { RULES_BASE } from './rules/base.mjs';
import { RULES_LAYER1 } from './rules/layer1.mjs';
import { RULES_LAYER2 } from './rules/layer2.mjs';
import { RULES_LAYER3A } from './rules/layer3a.mjs';
import { RULES_LAYER3B } from './rules/layer3b.mjs';
import { RULES_CLI } from './rules/cli.mjs';
import { RULES_FLOOR } from './rules/floor.mjs';

/** @type {Rule[]} */
export const RULES = [
  ...RULES_BASE,
  ...RULES_LAYER1,
  ...RULES_LAYER2,
  ...RULES_LAYER3A,
  ...RULES_LAYER3B,
  ...RULES_CLI,
  ...RULES_FLOOR,
];
