import { s3Backend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';

// Fewer cycles than the other backends: a killed import's last batch holds its entries until
// the batch deadline passes, so every cycle waits that long before it can go on. The deadline
// is 20 s; 6 s here (still far beyond a batch's own few hundred milliseconds on this bucket),
// so that the four cycles wait 24 s rather than 80. The same wait bounds what a run gets in:
// the first some 300 entries (three batches of about 100 land together before its kill), each
// later one a batch at most (397 after four runs, every time), so 600 entries outlast every
// killed run; each check and the final run read all of them.
describeImportCrash('importcrashs3', s3Backend, 4, 600, { CAIRN_TEST_BATCH_DEADLINE_MS: '6000' });
