import { ServiceError } from '../domain/errors.ts';
import type { Connector } from './connector.ts';
import { github } from './github/index.ts';
import { slack } from './slack/index.ts';
import { jira } from './jira/index.ts';
import { pagerduty } from './pagerduty/index.ts';

/** Every built-in connector, by name. */
export const CONNECTORS: ReadonlyMap<string, Connector> = new Map<string, Connector>([[github.name, github], [pagerduty.name, pagerduty], [jira.name, jira], [slack.name, slack]]);

export const connectorNamed = (name: string): Connector => {
  const connector = CONNECTORS.get(name);
  if (!connector) throw new ServiceError('NOT_FOUND', `no connector named "${name.slice(0, 64)}"; known: ${[...CONNECTORS.keys()].join(', ')}`);
  return connector;
};
