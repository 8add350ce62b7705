import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { connectorNamed } from '../../connectors/registry.ts';
import { disableConnector } from '../../services/disable-connector.ts';
import { enableConnector } from '../../services/enable-connector.ts';
import { listConnectors } from '../../services/list-connectors.ts';
import { DeliveryLineSchema } from '../../services/delivery-log.ts';
import { listDeliveries } from '../../services/list-deliveries.ts';
import { rotateConnectorSecret } from '../../services/rotate-connector-secret.ts';
import { SecretInput } from '../../services/connector-state.ts';
import { ConnectorSettingsInput, updateConnectorSettings } from '../../services/update-connector-settings.ts';
import { presentedKey } from '../auth.ts';
import { NOTHING_OR_EMPTY_OBJECT } from '../body-policy.ts';
import { contextOf } from '../context.ts';
import {
  ConnectorListSchema,
  ConnectorSettingsAnswerSchema,
  DisabledConnectorSchema,
  EnabledConnectorSchema,
  RotatedConnectorSchema,
} from './connector-schemas.ts';
import { ErrorResponse } from './error-schema.ts';
import type { RoutePlugin } from '../http-context.ts';

/**
 * The webhook URL to paste into the provider: this server's public address (CAIRN_PUBLIC_URL;
 * behind a TLS proxy the request's own scheme and host are the proxy's inside ones), else the
 * address the caller reached, and — for providers that cannot send headers, when keys are on
 * (static or managed) — the caller's key as ?api_key=, as SPEC §6 allows on webhook URLs only.
 */
const webhookUrl = (request: FastifyRequest, publicUrl: string | undefined, name: string, keyInUrl: boolean, authOn: boolean): string => {
  const url = `${publicUrl ?? `${request.protocol}://${request.host}`}/api/v1/webhooks/${name}`;
  const key = presentedKey(request);
  return keyInUrl && authOn && key ? `${url}?api_key=${encodeURIComponent(key)}` : url;
};

const NameParams = z.object({ name: z.string() });

export const connectorRoutes: RoutePlugin = async (app, { deps, keys }) => {
  // Keys are on once any exists, static or issued since start (open mode ends with the first).
  const urlOf = async (request: FastifyRequest, name: string, keyInUrl: boolean) =>
    webhookUrl(request, deps.config.publicUrl, name, keyInUrl, !(await keys.openMode()));

  app.get(
    '/api/v1/connectors',
    { schema: { summary: 'Every connector: state, webhook URL, counters', tags: ['connectors'], response: { 200: ConnectorListSchema, ...ErrorResponse } } },
    async (request) => {
      const connectors = await listConnectors(deps, contextOf(request, deps.config));
      return { connectors: await Promise.all(connectors.map(async (c) => ({ ...c, webhook_url: await urlOf(request, c.name, c.key_in_url) }))) };
    },
  );

  const action = (
    path: string,
    summary: string,
    run: typeof enableConnector | typeof disableConnector | typeof rotateConnectorSecret,
    answer: typeof EnabledConnectorSchema | typeof DisabledConnectorSchema | typeof RotatedConnectorSchema,
  ) =>
    app.post(
      `/api/v1/connectors/:name/${path}`,
      { schema: { summary, tags: ['connectors'], params: NameParams, body: path === 'disable' ? NOTHING_OR_EMPTY_OBJECT : SecretInput.optional(), response: { 200: answer, ...ErrorResponse } } },
      async (request) => {
        const { name } = request.params as { name: string };
        // What each takes, and {} on disable, is its body policy (body-policy.ts): the services read the rest.
        const result = await run(deps, contextOf(request, deps.config), name, request.body);
        const connector = connectorNamed(name);
        return { ...result, webhook_url: await urlOf(request, name, !connector.sendsHeaders) };
      },
    );
  action('enable', 'Enable a connector; answers its webhook URL and signing secret (shown once). One already on keeps its secret: a different signing_secret is 409 (rotate-secret replaces it)', enableConnector, EnabledConnectorSchema);
  action('disable', 'Disable a connector', disableConnector, DisabledConnectorSchema);
  action('rotate-secret', 'Replace the signing secret; answers the new one (shown once)', rotateConnectorSecret, RotatedConnectorSchema);

  app.get(
    '/api/v1/connectors/:name/deliveries',
    {
      schema: {
        summary: 'The last 100 deliveries, newest first: time, event, delivery id, outcome and the reason in words (never the body or secret)',
        tags: ['connectors'],
        params: NameParams,
        response: { 200: z.object({ name: z.string(), deliveries: z.array(DeliveryLineSchema) }), ...ErrorResponse },
      },
    },
    async (request) => listDeliveries(deps, contextOf(request, deps.config), (request.params as { name: string }).name),
  );

  app.put(
    '/api/v1/connectors/:name/settings',
    { schema: { summary: 'Set what a connector captures (Slack channels, Jira project map)', tags: ['connectors'], params: NameParams, body: ConnectorSettingsInput, response: { 200: ConnectorSettingsAnswerSchema, ...ErrorResponse } } },
    async (request) => updateConnectorSettings(deps, contextOf(request, deps.config), (request.params as { name: string }).name, request.body),
  );
};
