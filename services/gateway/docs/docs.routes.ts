import path from 'node:path';
import express, { type Router } from 'express';
import Joi from 'joi';
import { defineRoute, type RouteSpec } from '../http/route';

// Swagger UI is served from node_modules, file by file: its own index.html would load an
// outside example document, and nothing here may fetch from outside.
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'];

// Swagger UI runs only its own scripts from here and reads only this service's document.
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Calendar service API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

const INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/docs.openapi',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout'
  });
};
`;

export function docsAssets(): Router {
  const router = express.Router();
  router.get('/init.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'public, max-age=300').send(INIT);
  });
  for (const file of SWAGGER_FILES) {
    router.get(`/${file}`, (_req, res) => {
      res.set('Cache-Control', 'public, max-age=86400').sendFile(path.join(SWAGGER_DIR, file));
    });
  }
  return router;
}

export function docsRoutes(document: () => Record<string, unknown>): RouteSpec[] {
  const tags = ['Documentation'];
  return [
    defineRoute({
      method: 'get',
      path: '/docs.openapi',
      operationId: 'getOpenApi',
      summary: 'This document (OpenAPI 3.1)',
      description: 'The OpenAPI 3.1 document of every operation, generated from the same declarations that validate requests.',
      tags,
      auth: false,
      responses: { 200: { description: 'The OpenAPI document', body: Joi.object().unknown(true) } },
      handler: async (_input, _req, res) => {
        res.set('Cache-Control', 'public, max-age=60').json(document());
      },
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      operationId: 'getDocs',
      summary: 'Interactive API reference (served entirely from this service)',
      description: 'An interactive reference of this document (Swagger UI, served from this service: nothing is loaded from other hosts).',
      tags,
      auth: false,
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: async (_input, _req, res) => {
        res.type('html').set('Cache-Control', 'public, max-age=300').set('Content-Security-Policy', DOCS_CSP).send(PAGE);
      },
    }),
  ];
}
