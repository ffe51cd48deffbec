import Joi from 'joi';
import type { AppContext } from '../context';
import { authOf } from '../http/auth';
import { dataListOf, dataOf, errors } from '../http/responses';
import { defineRoute, ok, type RouteSpec } from '../http/route';
import { emailAddress } from '../http/validation';
import { liftSuppression, LISTED_SUPPRESSIONS as LISTED, listSuppressions } from './suppressions.service';

const suppressionSchema = Joi.object({
  email: Joi.string().required(),
  reason: Joi.string().required().description("The receiving server's refusal, or `unsubscribed` for an address that used a message's unsubscribe link"),
  created_at: Joi.string().required(),
}).meta({ title: 'MailSuppression' });

/**
 * Addresses the team's email no longer goes to (their server refused a message for good):
 * listed, and lifted one at a time (the next message to it is sent again).
 */
export function suppressionRoutes(ctx: AppContext): RouteSpec[] {
  const tags = ['Invites'];
  return [
    defineRoute({
      method: 'get',
      path: '/api/mail-suppressions',
      operationId: 'listMailSuppressions',
      summary: 'Addresses the team no longer emails',
      description: `Addresses whose server refused one of the team's messages for good (a 5xx reply), and addresses that unsubscribed from the team's email with a message's link: messages to them are recorded as \`skipped\`, not sent. Newest first, at most ${LISTED}.`,
      tags,
      auth: true,
      responses: { 200: { description: 'The suppressed addresses', body: dataListOf(suppressionSchema) }, ...errors(401, 503) },
      handler: async (_input, req) => {
        return ok({ data: await listSuppressions(ctx, authOf(req).teamId) });
      },
    }),
    defineRoute<Record<string, never>, { email: string }>({
      method: 'delete',
      path: '/api/mail-suppressions',
      operationId: 'liftMailSuppression',
      summary: 'Email an address again',
      description: 'Lifts the suppression of `email` (the next message to it is sent); an address that is not suppressed is a 404. Lift an unsubscribed address only when its owner asks for the email again.',
      tags,
      auth: true,
      query: Joi.object({ email: emailAddress().required() }),
      responses: {
        200: { description: 'Lifted', body: dataOf(Joi.object({ email: Joi.string().required(), deleted: Joi.boolean().valid(true).required() })) },
        ...errors(401, 404, 422, 503),
      },
      handler: async ({ query }, req) => {
        const email = await liftSuppression(ctx, authOf(req).teamId, query.email);
        return ok({ data: { email, deleted: true } });
      },
    }),
  ];
}
