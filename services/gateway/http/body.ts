import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import { unsupportedMediaType } from '../../../shared/errors/app-error';

export const API_BODY_LIMIT = '1mb';

const parseJson = express.json({ limit: API_BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] });

/** JSON bodies only: a body in any other content type is a 415, not a silent empty body. */
export const jsonBody: RequestHandler = (req, res, next) => {
  const empty = req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined;
  if (typeis.hasBody(req) && !empty && !typeis(req, ['application/json', 'application/*+json'])) {
    next(unsupportedMediaType('application/json'));
    return;
  }
  parseJson(req, res, next);
};
