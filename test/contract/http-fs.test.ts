import { filesystemBackend } from '../helpers/backend-env.ts';
import { describeHttpContract } from './http-contract.ts';

describeHttpContract('filesystem', filesystemBackend('http-fs'));
