import type { z } from 'zod';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** Everything needed to validate a kind and to generate its CustomResourceDefinition. */
export interface KindDef {
  kind: string;
  /** What the kind is, for `kubectl explain <kind>`. */
  description?: string;
  plural: string;
  singular: string;
  shortNames: string[];
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
}

export const ageColumn: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
};

/** Typed shape of a custom resource object of a kind with the given spec and status. */
export interface Resource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: import('./common.ts').ObjectMeta & { name: string; namespace?: string };
  spec: Spec;
  status?: Status;
}
