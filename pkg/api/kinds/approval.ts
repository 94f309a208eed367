/**
 * Human-in-the-loop pieces shared by Agent, Tool and Query (docs/approvals.md): the approval policy
 * of a tool, what a waiting Query lists as pending, and the decisions it records.
 */
import { z } from 'zod';
import { durationSchema } from '../common.ts';
import { GROUP } from '../group.ts';

/** Defaults of the policy fields, applied by the engine (a field left out is inherited, then defaulted). */
export const APPROVAL_DEFAULTS = { timeout: '10m', onTimeout: 'reject' } as const;

/** The built-in tools an Agent may opt in to (`tools: [{builtin: ask_user}]`). */
export const BUILTIN_TOOLS = ['ask_user'] as const;
export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];

/**
 * kubectl's way to decide: `berth.dev/approval-<id>: approve | approve:<answer> | reject[:<reason>]`
 * on the Query; the controller records it like a decision made through the API.
 */
export const APPROVAL_ANNOTATION_PREFIX = `${GROUP}/approval-`;

export const approvalPolicySchema = z
  .object({
    required: z
      .boolean()
      .optional()
      .describe(
        'Whether a call waits for a human decision. Default: the Tool’s approval.required, else true for an MCP tool its server marks destructiveHint, else false',
      ),
    timeout: durationSchema
      .optional()
      .describe('How long a call waits for a decision before onTimeout applies (default 10m)'),
    onTimeout: z
      .enum(['reject', 'proceed'])
      .optional()
      .describe('What an undecided call becomes at its deadline: reject (default) or proceed'),
    approvers: z
      .array(z.string().min(1).max(256))
      .max(64)
      .optional()
      .describe(
        'Who may decide through the API: user names or API-key public keys as the API authenticates them, or group:<name>; empty: any caller allowed to use the namespace’s API',
      ),
  })
  .describe('Approval policy of a tool call (docs/approvals.md)');
export type ApprovalPolicy = z.infer<typeof approvalPolicySchema>;

const argumentsField = z
  .record(z.string(), z.unknown())
  .optional()
  .meta({ 'x-kubernetes-preserve-unknown-fields': true });

export const pendingApprovalSchema = z.object({
  id: z.string().describe('What a decision names (POST …/approvals {"id"} or the annotation suffix)'),
  type: z.enum(['tool', 'question']).describe('tool: a tool call waits for approval; question: ask_user'),
  tool: z.string().describe('The function the model called (ask_user for a question)'),
  agent: z.string().optional().describe('The Agent whose model asked'),
  arguments: argumentsField.describe('The arguments the model gave'),
  question: z.string().optional().describe('ask_user: the question for the human'),
  inputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('JSON Schema edited arguments must satisfy')
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
  requestedAt: z.string().describe('When the call started waiting (RFC 3339)').meta({ format: 'date-time' }),
  deadline: z
    .string()
    .describe('When onTimeout applies if nobody decided (RFC 3339)')
    .meta({ format: 'date-time' }),
  timeout: z.string().describe('The policy’s timeout, e.g. 10m'),
  onTimeout: z.enum(['reject', 'proceed']).describe('What happens at the deadline'),
  approvers: z
    .array(z.string())
    .optional()
    .describe('Who may decide (empty: any caller allowed to use the namespace’s API)'),
});
export type PendingApproval = z.infer<typeof pendingApprovalSchema>;

export const approvalDecisionSchema = z.object({
  id: z.string().describe('The pending approval decided'),
  decision: z.enum(['approve', 'reject']).describe('approve (answer, for a question) or reject'),
  by: z.string().describe('Who decided: the caller as the API authenticated it, or who set the annotation'),
  via: z
    .enum(['api', 'annotation', 'timeout'])
    .optional()
    .describe('api: POST …/approvals; annotation: kubectl; timeout: onTimeout applied at the deadline'),
  at: z.string().describe('When (RFC 3339)').meta({ format: 'date-time' }),
  reason: z.string().optional().describe('Why (told to the model on a rejection)'),
  arguments: argumentsField.describe('Edited arguments the tool was called with instead'),
  answer: z.string().optional().describe('The answer to a question'),
});
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/** Bounds of a decision's free text (the API refuses more; an annotation is cut). */
export const APPROVAL_LIMITS = { reasonChars: 1024, answerChars: 16_384, idChars: 40 } as const;
