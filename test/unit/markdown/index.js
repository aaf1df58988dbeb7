// Lets `node --test test/unit/markdown/` run this folder's tests (Node resolves
// a directory argument to its index.js). `npm test` runs the files directly.
import './conformance.test.ts';
import './hostile.test.ts';
import './bounds.test.ts';
import './features.test.ts';
import './emoji.test.ts';
import './linear.test.ts';
import './fairness.test.ts';
