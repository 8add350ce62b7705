import { s3Backend } from '../helpers/backend-env.ts';
import { describeHttpContract } from './http-contract.ts';

// One s3rver behind an If-None-Match-enforcing proxy; each server gets its own key prefix.
describeHttpContract('s3', s3Backend('http'));
