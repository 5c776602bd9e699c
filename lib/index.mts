// The ES module face of procpin: the same objects as require('procpin') (one copy of each class
// and of the addon), re-exported by name.
export * from './index.js';
