import Joi from 'joi';
import { cursorParam, emailAddress, idParam, personName } from '../http/validation';

const RSVP_ANSWERS = ['yes', 'maybe', 'no'] as const;
export type RsvpAnswer = (typeof RSVP_ANSWERS)[number];

export const rsvpBody = Joi.object({
  // The invitees' rule: the name goes into the confirmation's To header and ATTENDEE CN.
  name: personName().min(1).required(),
  email: emailAddress().lowercase().required(),
  answer: Joi.string().valid(...RSVP_ANSWERS).required(),
  key: Joi.string().max(200).description("The answer's key, to change an answer this email gave before: emailed to the address in the link of every RSVP message (`/e/{uid}/rsvp?key=…`)"),
}).unknown(true);

export interface RsvpInput {
  name: string;
  email: string;
  answer: RsvpAnswer;
  /** The key of the answer this email gave before: it lets this one replace it. */
  key?: string;
}

export const rsvpSchema = Joi.object({
  id: Joi.string().pattern(/^rsvp_/).required(),
  name: Joi.string().required(),
  email: Joi.string().required(),
  answer: Joi.string().valid(...RSVP_ANSWERS).required(),
  created_at: Joi.string().required(),
  updated_at: Joi.string().required(),
}).meta({ title: 'Rsvp' });

/** An answer as a caller that sent its key gets it: with that key, which lets a later answer from the same email replace it. */
export const answerSchema = rsvpSchema.keys({ key: Joi.string().required() }).meta({ title: 'RsvpAnswer' });

export const countsSchema = Joi.object({
  yes: Joi.number().integer().min(0).required(),
  maybe: Joi.number().integer().min(0).required(),
  no: Joi.number().integer().min(0).required(),
}).meta({ title: 'RsvpCounts' });

export const listRsvpsQuery = Joi.object({
  answer: Joi.string().valid(...RSVP_ANSWERS),
  per_page: Joi.number().integer().min(1).max(500).default(100),
  cursor: cursorParam(),
}).unknown(true);

export const rsvpParams = Joi.object({
  cal: idParam('cal_'),
  evt: idParam('evt_'),
  rsvp: idParam('rsvp_'),
});
