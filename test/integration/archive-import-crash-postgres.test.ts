import { postgresBackend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';

describeImportCrash('importcrashpostgres', postgresBackend, 10, 3000);
