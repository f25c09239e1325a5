import { Global, Module } from '@nestjs/common';
import { ClickBus } from './click';

/** Provides the one `ClickBus` the portal-events processor publishes on and the PBX side subscribes to. */
@Global()
@Module({ providers: [ClickBus], exports: [ClickBus] })
export class ClicksModule {}
