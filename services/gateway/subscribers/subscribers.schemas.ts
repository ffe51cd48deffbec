import Joi from 'joi';
import { cursorParam, emailAddress, idParam, personName } from '../http/validation';

export const SUBSCRIBE_PLATFORMS = ['google', 'apple', 'outlook_web', 'office365', 'ics'] as const;
export type SubscribePlatform = (typeof SUBSCRIBE_PLATFORMS)[number];

export const subscriberSchema = Joi.object({
  id: Joi.string().pattern(/^sub_/).required(),
  platform: Joi.string().valid(...SUBSCRIBE_PLATFORMS).required(),
  name: Joi.string().allow(null).required(),
  email: Joi.string().allow(null).required(),
  status: Joi.string().valid('active', 'blocked').required(),
  sync_count: Joi.number().integer().min(0).required().description('Fetches of the personal feed'),
  last_synced_at: Joi.string().allow(null).required(),
  feed_url: Joi.string().uri().required().description('The personal feed address'),
  created_at: Joi.string().required(),
  updated_at: Joi.string().required(),
}).meta({ title: 'Subscriber' });

export const subscriberParams = Joi.object({
  cal: idParam('cal_'),
  sub: idParam('sub_'),
});

export const listSubscribersQuery = Joi.object({
  status: Joi.string().valid('active', 'blocked'),
  platform: Joi.string().valid(...SUBSCRIBE_PLATFORMS),
  per_page: Joi.number().integer().min(1).max(200).default(50),
  cursor: cursorParam(),
}).unknown(true);

export const updateSubscriberBody = Joi.object({ status: Joi.string().valid('active', 'blocked').required() }).unknown(true);

/** The form's fields as the route declares them: strings, when sent. */
export const subscriberDetailsTypes = Joi.object({
  name: Joi.string().allow(''),
  email: Joi.string().allow(''),
}).unknown(true);

/** Asked on the subscribe page when the calendar wants to know who subscribes. */
export const subscriberDetailsBody = Joi.object({
  name: personName().min(1).required(),
  email: emailAddress().required(),
}).unknown(true);
