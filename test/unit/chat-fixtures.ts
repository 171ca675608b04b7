// Shared fixtures for the chat-template tests. The templates come from ../shared (helpers/shared.ts throws
// when it is missing, so a test that needs them fails instead of passing without them).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, ChatTool } from '../../lib/openai/protocol.js';
import { templatesDir } from '../helpers/shared.js';

export const TEMPLATES = templatesDir;
export const readTemplate = (name: string) => readFileSync(join(TEMPLATES, name), 'utf8');

export const WEATHER_TOOL: ChatTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] },
  },
};

export const SYSTEM: ChatMessage = { role: 'system', content: 'You are helpful.' };
export const USER1: ChatMessage = { role: 'user', content: 'Weather in Paris?' };
export const CALL: ChatMessage = {
  role: 'assistant', content: null,
  tool_calls: [{ id: 'a1b2c3d4e', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Lyon"}' } }],
};
export const RESULT: ChatMessage = { role: 'tool', tool_call_id: 'a1b2c3d4e', content: '22C' };
export const ANSWER: ChatMessage = { role: 'assistant', content: 'It is 22C.' };
export const USER2: ChatMessage = { role: 'user', content: 'Thanks!' };

/** system + 3 user turns with a tool call and its result in the middle. */
export const TOOL_CONVERSATION: ChatMessage[] = [SYSTEM, USER1, CALL, RESULT, ANSWER, USER2];
