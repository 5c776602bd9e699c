// The ES module face of procpin/child_process: the same objects as require('procpin/child_process').
export * from './child_process.js';
