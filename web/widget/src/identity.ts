// Who this browser is to Palaver: a device id kept in localStorage per account (registered once),
// and the registered user's authorization header after login(). Storage that throws (privacy
// modes, sandboxed frames) leaves the widget working for the life of the page.

export interface Identity {
  deviceId: string;
  authorization: string | null;
  /** The device was registered (POST /devices) as it stands: anonymous, or with this authorization. */
  registered: boolean;
}

function randomDeviceId(): string {
  // getRandomValues works on plain-HTTP pages too, where crypto.randomUUID does not exist.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export class IdentityStore {
  private readonly key: string;
  private memory: Identity | null = null;

  constructor(account: string) {
    this.key = `palaver:${account}`;
  }

  load(): Identity {
    if (this.memory) return this.memory;
    let stored: Partial<Identity> | null;
    try {
      stored = JSON.parse(localStorage.getItem(this.key) ?? 'null') as Partial<Identity> | null;
    } catch {
      stored = null;
    }
    this.memory =
      stored && typeof stored.deviceId === 'string'
        ? { deviceId: stored.deviceId, authorization: stored.authorization ?? null, registered: stored.registered === true }
        : { deviceId: randomDeviceId(), authorization: null, registered: false };
    this.save(this.memory);
    return this.memory;
  }

  save(identity: Identity): void {
    this.memory = identity;
    try {
      localStorage.setItem(this.key, JSON.stringify(identity));
    } catch {
      // Kept in memory only.
    }
  }

  /**
   * The identity another tab of this site saved (it signed in or out, or started over as a new
   * device), or null when the storage event is about something else.
   */
  savedElsewhere(event: StorageEvent): Identity | null {
    if (event.key !== this.key || event.newValue === null) return null;
    let stored: Partial<Identity> | null;
    try {
      stored = JSON.parse(event.newValue) as Partial<Identity> | null;
    } catch {
      return null;
    }
    if (typeof stored?.deviceId !== 'string') return null;
    this.memory = { deviceId: stored.deviceId, authorization: stored.authorization ?? null, registered: stored.registered === true };
    return this.memory;
  }

  /**
   * A fresh device, not registered yet: anonymous for logout(), or still the signed-in customer
   * when the old device was erased.
   */
  renew(authorization: string | null = null): Identity {
    const fresh = { deviceId: randomDeviceId(), authorization, registered: false };
    this.save(fresh);
    return fresh;
  }
}
