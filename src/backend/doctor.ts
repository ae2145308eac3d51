// dlock doctor's findings, in dlock's words: a backend that can check its store (caps.doctor)
// checks each member against what dlock's guarantees need and says what to change; the command
// prints the report and decides the exit code (docs/operations/doctor.md).

import type { MemberFailure } from './failure.js';

export type DoctorStatus = 'OK' | 'WARN' | 'FAIL';

export interface DoctorCheck {
  name: string;
  status: DoctorStatus;
  message: string;
  /** The change to make; '' when there is nothing to change. */
  fix: string;
}

export interface DoctorOptions {
  /** The lease length the jobs use: limits (clock, round trip) scale with it. */
  ttlMs: number;
}

/** What doctor found, in the order the members were configured. */
export interface DoctorReport {
  /** One entry per member checked or not reached (a member may stand for several checked nodes). */
  members: { label: string; reachable: boolean; checks: DoctorCheck[] }[];
  /** The checks across members, under their heading: none with one member. */
  between: { heading: string; checks: DoctorCheck[] };
  /** The members that could not be checked (their entries say so too): 69 after the report. */
  unchecked: MemberFailure[];
}
