import { filesystemBackend } from '../helpers/backend-env.ts';
import { describeBatchCrash } from './batch-crash.ts';

describeBatchCrash(filesystemBackend('batchcrash'));
