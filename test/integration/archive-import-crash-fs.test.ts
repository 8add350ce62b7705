import { filesystemBackend } from '../helpers/backend-env.ts';
import { describeImportCrash } from './archive-import-crash.ts';
import { crashCycles } from '../helpers/crash-depth.ts';

describeImportCrash('importcrashfs', filesystemBackend, crashCycles(10), 20_000);
