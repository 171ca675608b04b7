// NOTE(server/openapi): GET /openapi.json, generated from the zod schemas that validate requests
// (lib/openai/protocol.ts, protocol-trajectory.ts) and describe responses (protocol-response.ts), so the
// published contract cannot drift from what the server checks. Built once per server.
import { createRequire } from 'node:module';
import { z } from 'zod';
import { ChatCompletionRequestSchema, TrajectoryLogRequestSchema } from '../openai/protocol.js';
import {
  ChatCompletionResponseSchema, ErrorEnvelopeSchema, ModelListSchema, TrajectoryLogResponseSchema, ValidationErrorSchema,
} from '../openai/protocol-response.js';

const VERSION = (createRequire(__filename)('../../package.json') as { version: string }).version;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  // Refinements (integer-ness, finiteness) have no JSON Schema form; they stay checks of the server.
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any', io, target: 'draft-2020-12' }) as Record<string, unknown>;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json(ref('ErrorEnvelope')) });

/** The errors every authenticated JSON POST may answer. */
const POST_ERRORS = {
  '400': error('Bad request: a value the server cannot honour, a limit, the template, the context'),
  '401': error('Invalid or missing API key'),
  '404': error('Unknown model'),
  '413': error('Body over --max-request-bytes'),
  '415': error('Content-Type is not application/json'),
  '422': { description: 'Validation error', content: json(ref('HTTPValidationError')) },
  '429': error('Rate limit (--rate-limit-requests / --rate-limit-tokens); see Retry-After'),
  '500': error('Internal error'),
  '503': error('Loading, draining, queue full, or the trajectory store unavailable'),
};

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'tokenmill', version: VERSION, description: 'OpenAI-compatible chat completions served by tokenmill (docs/http-api.md).' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        ChatCompletionRequest: jsonSchema(ChatCompletionRequestSchema, 'input'),
        ChatCompletion: jsonSchema(ChatCompletionResponseSchema, 'output'),
        ModelList: jsonSchema(ModelListSchema, 'output'),
        TrajectoryLogRequest: jsonSchema(TrajectoryLogRequestSchema, 'input'),
        TrajectoryLog: jsonSchema(TrajectoryLogResponseSchema, 'output'),
        ErrorEnvelope: jsonSchema(ErrorEnvelopeSchema, 'output'),
        HTTPValidationError: jsonSchema(ValidationErrorSchema, 'output'),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/chat/completions': {
        post: {
          operationId: 'createChatCompletion',
          requestBody: { required: true, content: json(ref('ChatCompletionRequest')) },
          responses: {
            '200': {
              description: 'A chat completion, or with stream: true a text/event-stream of chunks ending data: [DONE]',
              content: { ...json(ref('ChatCompletion')), 'text/event-stream': { schema: { type: 'string' } } },
            },
            ...POST_ERRORS,
          },
        },
      },
      '/v1/models': {
        get: { operationId: 'listModels', responses: { '200': { description: 'The served models', content: json(ref('ModelList')) }, '401': POST_ERRORS['401'], '503': POST_ERRORS['503'] } },
      },
      '/v1/preview/models/{model_id}/log': {
        post: {
          operationId: 'logTrajectories',
          parameters: [{ name: 'model_id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: json(ref('TrajectoryLogRequest')) },
          responses: { '200': { description: 'Stored, with the computed metrics', content: json(ref('TrajectoryLog')) }, ...POST_ERRORS },
        },
      },
      '/health': {
        get: {
          operationId: 'health', security: [],
          responses: {
            '200': { description: 'Every model loaded', content: json({ type: 'object', properties: { status: { type: 'string' } }, required: ['status'] }) },
            '503': { description: 'Loading or draining', content: json({ type: 'object', properties: { status: { type: 'string' } }, required: ['status'] }) },
          },
        },
      },
      '/metrics': {
        get: { operationId: 'metrics', security: [], responses: { '200': { description: 'Prometheus text', content: { 'text/plain': { schema: { type: 'string' } } } } } },
      },
    },
  };
}
