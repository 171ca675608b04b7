// Shared fixtures for the chat-template tests.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChatMessage, ChatTool } from '../../lib/openai/protocol.js';

export const SHARED = process.env.TOKENMILL_SHARED ?? resolve(__dirname, '../../../shared');
export const TEMPLATES = join(SHARED, 'templates');
export const haveShared = existsSync(TEMPLATES);
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
