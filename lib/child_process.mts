// The ES module face of procpin/child_process: the same objects as require('procpin/child_process').
export * from './child_process.js';
// node:child_process's default import is its namespace (`import cp from 'node:child_process'`);
// this one's is the CommonJS exports object, so that the same import line switches.
import cjs from './child_process.js';
export default cjs;
