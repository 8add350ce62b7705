import { postgresBackend } from '../helpers/backend-env.ts';
import { describeHttpContract } from './http-contract.ts';

// One throwaway cluster; each server the suite starts gets its own empty database.
describeHttpContract('postgres', postgresBackend('http_contract'));
