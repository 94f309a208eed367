/** The rules live in pkg/evaluator (the built-in evaluator of `berth up` scores with them too). */
export * from '../../pkg/evaluator/rules.ts';
