/**
 * `team/<name>`: members take turns on one shared conversation. `sequential` runs each member once in
 * order; `round-robin` cycles through the members for `maxTurns` turns (default: one round). Every
 * member sees the conversation so far, earlier members' answers included (as assistant messages named
 * after the member); the team's answer is the last turn's answer. Member teams nest; cycles are refused.
 * A member that pauses for approval pauses the team: its turn and what it produced so far go into
 * the checkpoint (a team frame), and a resumed run continues at that turn.
 */
import type { Context } from '@opentelemetry/api';
import { takeFrame } from '../approval/resume.ts';
import { QueryPaused } from '../approval/types.ts';
import { found, QueryFailure } from '../failure.ts';
import type { ChatCompletionMessageParam } from '../model-client.ts';
import { type Scope, type TargetResult, toModelMessages } from '../scope.ts';
import { inSpan } from '../tracing.ts';
import { runAgent } from './agent.ts';

export async function runTeam(
  scope: Scope,
  parent: Context,
  name: string,
  conversation: ChatCompletionMessageParam[],
  stack: string[] = [],
): Promise<TargetResult> {
  if (stack.includes(name))
    throw new QueryFailure('InvalidTarget', `Team ${name} contains itself: ${[...stack, name].join(' → ')}`);
  // The query's own target (no team above it) is TargetNotFound; a member team, InvalidTarget.
  const missing = stack.length ? 'InvalidTarget' : 'TargetNotFound';
  const team = found(scope.deps.lookup.team(scope.namespace, name), `Team ${name}`, scope.namespace, missing);
  const { members, strategy = 'sequential' } = team.spec;
  const turns = strategy === 'round-robin' ? (team.spec.maxTurns ?? members.length) : members.length;
  const frame = takeFrame(scope, 'team', name);
  scope.emit(
    frame ? 'TeamExecutionResume' : 'TeamExecutionStart',
    `Team ${name} ${frame ? 'resumed' : 'started'}`,
    {
      team: name,
      strategy,
      members: members.length,
      turns,
    },
  );
  const started = performance.now();
  return inSpan(
    scope.deps.tracer,
    parent,
    'team.execution',
    { 'berth.team': name, 'berth.team.strategy': strategy },
    async (ctx) => {
      const produced: TargetResult['produced'] = frame ? [...frame.produced] : [];
      let content = frame?.content ?? '';
      for (let turn = frame?.turn ?? 0; turn < turns; turn++) {
        const member = members[turn % members.length];
        if (!member) break;
        scope.emit('TeamTurnStart', `Team ${name} turn ${turn + 1}: ${member.type} ${member.name}`, {
          team: name,
          turn: turn + 1,
          memberType: member.type,
          member: member.name,
        });
        const sofar = [...conversation, ...toModelMessages(produced)];
        let result: TargetResult;
        try {
          result =
            member.type === 'agent'
              ? await runAgent(scope, ctx, member.name, sofar)
              : await runTeam(scope, ctx, member.name, sofar, [...stack, name]);
        } catch (err) {
          if (err instanceof QueryPaused)
            err.frames.unshift({ kind: 'team', name, turn, produced: [...produced], content });
          throw err;
        }
        produced.push(...result.produced);
        content = result.content;
        scope.emit('TeamTurnComplete', `Team ${name} turn ${turn + 1} done`, {
          team: name,
          turn: turn + 1,
          member: member.name,
        });
      }
      scope.emit('TeamExecutionComplete', `Team ${name} answered`, {
        team: name,
        turns,
        durationMs: Math.round(performance.now() - started),
      });
      return { content, produced };
    },
  );
}
