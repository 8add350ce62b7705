import { filesystemBackend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';

describeImportCrash('importcrashfs', filesystemBackend, 10, 20_000);
