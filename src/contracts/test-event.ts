// The answer of "Send test event" (POST /adminApi/services/{serviceId}/test-event), as
// deliveries/test-event.ts builds it and the dashboard's Service page shows it.
export interface TestEventResult {
  webhookId: string;
  /** The receiver's HTTP status; null when no answer came (refused address, timeout, DNS). */
  status: number | null;
  ok: boolean;
  durationMs: number;
  /** The start of the receiver's body. */
  body: string | null;
  error: string | null;
  /** Sent with both signatures: a rotation's grace period is running. */
  signatures: number;
}
