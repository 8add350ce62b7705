import { s3Backend } from '../helpers/backend-env.ts';
import { describeBatchCrash } from './batch-crash.ts';

describeBatchCrash(s3Backend('batchcrash'));
