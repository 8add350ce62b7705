import { s3Backend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';

// Fewer cycles than the other backends: a killed import's last batch holds its entries until
// the batch deadline (20 s) passes, so every cycle waits that long before it can go on.
describeImportCrash('importcrashs3', s3Backend, 4, 1000);
