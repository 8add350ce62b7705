import { filesystemBackend } from '../helpers/backend-env.ts';
import { describeClientContract } from './client-contract.ts';

describeClientContract('filesystem', filesystemBackend('client-fs'));
