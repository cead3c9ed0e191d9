import type { Discovery, Endpoint } from '@muster/core';

/** Who else runs this service: the application's view of Discovery, injected by its container. */
export class Roster {
  constructor(
    readonly discovery: Discovery,
    private readonly service: string,
  ) {}

  async peers(): Promise<Endpoint[]> {
    return (await this.discovery.list(this.service)).filter((e) => e.ready && e.id !== this.discovery.self?.id);
  }
}
