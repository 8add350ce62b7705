import { s3Backend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';

// Fewer cycles than the other backends: a killed import's last batch holds its entries until
// the batch deadline passes, so every cycle waits that long before it can go on. The deadline
// is 20 s; 6 s here (still far beyond a batch's own few hundred milliseconds on this bucket),
// so that the four cycles wait 24 s rather than 80.
describeImportCrash('importcrashs3', s3Backend, 4, 1000, { CAIRN_TEST_BATCH_DEADLINE_MS: '6000' });
