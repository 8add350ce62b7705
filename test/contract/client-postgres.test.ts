import { postgresBackend } from '../helpers/backend-env.ts';
import { describeClientContract } from './client-contract.ts';

// One throwaway cluster; each server the suite starts gets its own empty database.
describeClientContract('postgres', postgresBackend('client_contract'));
