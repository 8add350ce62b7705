import { postgresBackend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';
import { crashCycles } from '../helpers/crash-depth.ts';

// Five kills (ten under `npm run reliability`): a run gets some 50 entries in before its kill
// (400 to 500 of 3,000 after ten runs), so every run is cut short mid-import (asserted), and
// more kills only repeat that.
describeImportCrash('importcrashpostgres', postgresBackend, crashCycles(10), 3000);
