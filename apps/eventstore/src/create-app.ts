import { ConsoleLogger, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { LogLifecycle } from '@ordinal/log';
import { AppModule } from './app.module.js';
import type { OrdinalConfig } from './config/ordinal-config.js';
import { headerText } from './validation/header-text.hook.js';
import { registerJsonBodyParser } from './validation/json-body.parser.js';
import { methodNotAllowed } from './errors/method-not-allowed.hook.js';
import { corsStep } from './security/cors.hook.js';
import { securityHeaders } from './security/security-headers.hook.js';
import { NDJSON, bodyTimeout } from './validation/body-timeout.hook.js';
import { registerRequestGate, type RequestStep } from './http/request-gate.js';
import { registerHttpMetrics } from './metrics/http-metrics.hook.js';
import { MetricsService } from './metrics/metrics.service.js';
import { httpTracing } from './tracing/http-tracing.hook.js';
import { earlyAuth } from './auth/early-auth.hook.js';
import { RequestAuthenticator } from './auth/request-authenticator.js';
import { AuditTrail } from './audit/audit-trail.service.js';
import { registerAuditHook } from './audit/audit.hook.js';
import type { HttpErrorCode } from '@ordinal/contract';
import { HTTP_STATUS_BY_CODE } from './errors/status-by-code.js';
import { finishDocument } from './openapi/finish-document.js';

export interface CreateAppOptions {
  /** `false` silences Nest's logs (tests); default: text or JSON as configured. */
  logger?: LoggerService | false;
  /** Serve the Swagger UI at /api/docs (the JSON document is always at /api/docs-json). @default true */
  openApiUi?: boolean;
}

export function createLogger(config: OrdinalConfig): LoggerService {
  return new ConsoleLogger({
    json: config.logFormat === 'json',
    colors: config.logFormat === 'text' && process.stdout.isTTY,
  });
}

/**
 * Builds the server (Fastify underneath, for its request-path speed) without listening:
 * main.ts and the end-to-end tests share it.
 */
export async function createApp(
  config: OrdinalConfig,
  options: CreateAppOptions = {},
): Promise<NestFastifyApplication> {
  // maxParamLength: stream ids (up to 200 characters) must reach validation for a 400, not Fastify's 414 at 100.
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    logger: false,
    routerOptions: { maxParamLength: 1000 },
  });
  // Before Nest adds the routes (at init), so every one is recorded.
  const refuseMethod = methodNotAllowed(adapter.getInstance());
  // bodyParser: false leaves JSON to Fastify's own parser (same parser, same limits and
  // errors) instead of Nest's per-request wrapper around it; no route takes form bodies.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: options.logger ?? createLogger(config),
    bodyParser: false,
  });
  // Bodies are JSON only; any other media type (text/plain included) gets a 415 that says what
  // to send (Fastify's own says only its name).
  const fastify = app.getHttpAdapter().getInstance();
  // Routes are added at init, after this: the hook sees every one.
  registerHttpMetrics(fastify, app.get(MetricsService).registry);
  const trace = httpTracing(fastify);
  const cors = corsStep(config.corsOrigins);
  // The server's own request checks, in this order, as one onRequest hook (request-gate.ts).
  const steps: RequestStep[] = [
    // First of all, so every answer carries it, the earliest refusals included.
    securityHeaders,
    // Before the 405: a preflight from an allowed origin is answered, not refused.
    ...(cors ? [cors] : []),
    refuseMethod,
    bodyTimeout(config.bodyTimeoutMs),
    // Before the steps after it: what they and the routes read of a header is its UTF-8 text.
    headerText,
    trace,
  ];
  // Last, before any body is read: a request with a body to a scoped route is authenticated on its headers.
  registerRequestGate(fastify, steps, earlyAuth(app.get(RequestAuthenticator)));
  // One audit record per admin operation, denial or audited read (ORDINAL_AUDIT=on).
  registerAuditHook(fastify, app.get(AuditTrail));
  fastify.removeContentTypeParser('text/plain');
  registerJsonBodyParser(fastify);
  // The bulk import reads its body as a stream, line by line (never buffered whole).
  fastify.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));
  fastify.addContentTypeParser('*', (request, _payload, done) => {
    const type = request.headers['content-type'];
    const error = new Error(
      `Send the body as JSON with Content-Type: application/json${type ? ` (got ${type})` : ''}`,
    );
    const code = 'unsupported_media_type' satisfies HttpErrorCode;
    done(Object.assign(error, { statusCode: HTTP_STATUS_BY_CODE[code], code }), undefined);
  });
  const document = finishDocument(
    SwaggerModule.createDocument(
      app,
      new DocumentBuilder()
        .setTitle('Ordinal')
        .setDescription(
          'One log with one global index: ingestion, reading, streams and aggregates. Every error answer has the one body `ErrorResponse`. ' +
            'Each operation lists the token scope it needs in `x-required-scopes`. ' +
            'The console, in a browser: the live tail, messages, streams, projections and interfaces: [/console](/console).',
        )
        .setVersion('0.1.0')
        // An opaque API token (ORDINAL_TOKENS) or a JWT (ORDINAL_JWT_*).
        .addSecurity('bearer', {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token from ORDINAL_TOKENS (`name:secret:scopes`), or a JWT of the identity provider named by ORDINAL_JWT_JWKS_URL (docs/security.md); send `Authorization: Bearer <token>`',
        })
        .addSecurity('ticket', {
          type: 'apiKey',
          in: 'query',
          name: 'ticket',
          description:
            'A short-lived, single-use stream ticket from POST /api/events/stream-ticket (the stream only)',
        })
        .setExternalDoc('Console (live tail, messages, streams, consumers)', '/console')
        .setLicense('MIT', 'https://opensource.org/license/mit')
        .build(),
    ),
  );
  SwaggerModule.setup('api/docs', app, document, {
    jsonDocumentUrl: 'api/docs-json',
    ui: options.openApiUi ?? true,
  });
  return app;
}

/**
 * Listens, then waits for the StartMarker, which the log writes once the HTTP server is
 * listening (a start that fails, on a port in use say, writes none). main.ts and the tests share it.
 */
export async function listen(
  app: NestFastifyApplication,
  port: number,
  host: string,
): Promise<void> {
  await app.listen(port, host);
  await app.get(LogLifecycle).whenStarted();
}
