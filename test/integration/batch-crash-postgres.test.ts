import { postgresBackend } from '../helpers/backend-env.ts';
import { describeBatchCrash } from './batch-crash.ts';

describeBatchCrash(postgresBackend('batchcrash'));
