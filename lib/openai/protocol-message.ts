// NOTE(openai/protocol-message): message and tool schemas, shared by the chat request and the
// trajectory log (split out so protocol.ts and protocol-trajectory.ts do not import each other).
import { py_bool, py_dict, py_list, py_literal, py_object, py_str, py_union } from './py-types.js';
import { z } from 'zod';

const nullable = <T extends z.ZodType>(s: T) => s.nullable().optional();

// ---- messages -------------------------------------------------------------------------------------

export const TextPartSchema = py_object({ type: py_str(), text: py_str().optional() });
/** Content: a string or a list of content parts (only text parts are supported; see validate.ts). */
export const ContentSchema = py_union(['str', 'list'], [py_str(), py_list(TextPartSchema)]);

export const ToolCallSchema = py_object({
  id: py_str(),
  type: py_literal(['function']).optional(),
  function: py_object({ name: py_str(), arguments: py_str() }),
});

/**
 * Every role of docs/http-api.md#messages (developer, system, user, assistant, tool, function,
 * custom/generic).
 */
export const MessageSchema = py_object({
  role: py_str(),
  content: nullable(ContentSchema),
  name: py_str().optional(),
  tool_calls: nullable(py_list(ToolCallSchema)),
  tool_call_id: nullable(py_str()),
  reasoning: nullable(py_str()),
  reasoning_content: nullable(py_str()),
});

export const ToolSchema = py_object({
  type: py_literal(['function']),
  function: py_object({
    name: py_str(),
    description: nullable(py_str()),
    parameters: nullable(py_dict()),
    strict: nullable(py_bool()),
  }),
});

