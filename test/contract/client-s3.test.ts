import { s3Backend } from '../helpers/backend-env.ts';
import { describeClientContract } from './client-contract.ts';

// One s3rver behind an If-None-Match-enforcing proxy; each server gets its own key prefix.
describeClientContract('s3', s3Backend('client'));
