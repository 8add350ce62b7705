import { filesystemBackend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';
import { crashCycles } from '../helpers/crash-depth.ts';

// 2,000 entries a kill: a run gets some 1,000 to 1,300 entries in before its kill (10,149 of
// 20,000 after ten runs, 6,567 after five), so the archive outlasts every killed run and each
// kill lands mid-import (asserted); a larger one only makes every check read more.
const CYCLES = crashCycles(10);
describeImportCrash('importcrashfs', filesystemBackend, CYCLES, CYCLES * 2000);
