// NOTE(openai/protocol-trajectory): the trajectory-log body as ART sends it
// (docs/http-api.md#trajectory-log). Every Trajectory field has ART's default, filled in by the schema, and
// extra fields (body `model_id`, group `exceptions`/`metadata`/`metrics`/`logs`, newer ART keys) are
// kept, because ART clients send them and `trajectories export` must give back what was received.
import { z } from 'zod';
import { py_bool, py_dict, py_float, py_int, py_list, py_object, py_str, py_union } from './py-types.js';
import { ToolSchema } from './protocol-message.js';

const scalar = py_union(['float', 'int', 'str', 'bool'], [py_float(), py_int(), py_str(), py_bool()]);
const metricValue = py_union(['float', 'bool'], [py_float(), py_bool()]);

/** messages_and_choices items: an OpenAI message (has `role`) or a Choice (has `message`). */
export const MessageOrChoiceSchema = py_dict().superRefine((item, ctx) => {
  const isChoice = 'message' in item && 'finish_reason' in item;
  if (!isChoice && typeof item.role !== 'string') {
    ctx.addIssue({ code: 'custom', message: 'py:value_error:Value error, item must be a message (with role) or a choice (with message and finish_reason)' });
  }
});

export const HistorySchema = py_object({
  messages_and_choices: py_list(MessageOrChoiceSchema),
  tools: py_list(ToolSchema).nullable().default(null),
});

export const TrajectorySchema = py_object({
  messages_and_choices: py_list(MessageOrChoiceSchema).default([]),
  tools: py_list(ToolSchema).nullable().default(null),
  additional_histories: py_list(HistorySchema).default([]),
  reward: py_float().default(0),
  initial_policy_version: py_int().nullable().default(null),
  final_policy_version: py_int().nullable().default(null),
  metrics: z.record(z.string(), metricValue, { error: () => 'py:dict_type' }).default({}),
  metadata: z.record(z.string(), scalar.nullable(), { error: () => 'py:dict_type' }).default({}),
  logs: py_list(py_str()).default([]),
  start_time: py_str().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'py:datetime_from_date_parsing' }).optional(),
});

export const TrajectoryGroupSchema = py_object({
  trajectories: py_list(TrajectorySchema),
  exceptions: py_list(py_object({ type: py_str(), message: py_str(), traceback: py_str() })).default([]),
  metadata: z.record(z.string(), scalar.nullable(), { error: () => 'py:dict_type' }).default({}),
  metrics: z.record(z.string(), metricValue, { error: () => 'py:dict_type' }).default({}),
  logs: py_list(py_str()).default([]),
});

export const TrajectoryLogRequestSchema = py_object({
  split: py_str(),
  trajectory_groups: py_list(TrajectoryGroupSchema),
  model_id: py_str().optional(),
});

export type Trajectory = z.output<typeof TrajectorySchema>;
export type TrajectoryGroup = z.output<typeof TrajectoryGroupSchema>;
export type TrajectoryLogRequest = z.output<typeof TrajectoryLogRequestSchema>;
