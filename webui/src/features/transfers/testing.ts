// A stand-in for the browser's EventSource in unit tests (jsdom has none): each one made is
// kept, and a test sends it the catalog's events.
import { fixtures } from "@/testing/server";
import type { TransferJob } from "./types";

export class FakeEventSource extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static made: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  readonly url: string;

  constructor(url: string) {
    super();
    this.url = url;
    FakeEventSource.made.push(this);
  }

  open() {
    this.readyState = FakeEventSource.OPEN;
    this.dispatchEvent(new Event("open"));
  }

  job(job: TransferJob) {
    this.dispatchEvent(new MessageEvent("job", { data: JSON.stringify(job) }));
  }

  fail(closed: boolean) {
    this.readyState = closed ? FakeEventSource.CLOSED : FakeEventSource.CONNECTING;
    this.dispatchEvent(new Event("error"));
  }

  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
}

export function aJob(change: Partial<TransferJob> = {}): TransferJob {
  return { ...fixtures.transferJob, ...change };
}
