/**
 * The intake floor of bench/http.bench.ts: the least a Nest application on the bridge's packages does to take
 * one call event the way the bridge must, measured in the same run as the minimal app and the bridge. It is
 * never part of the bridge; it shows what share of the minimal app intake can reach on this stack.
 *
 * `POST /v1/calls/events` with `Authorization: Bearer <FLOOR_TOKEN>`: the token compared by its SHA-256 in
 * constant time, the JSON body turned into a class-validator DTO and validated (whitelist, unknown values
 * refused), the event stored with one INSERT committed durably through the bridge's own SQLite group commit
 * (the WAL synced off the main thread before the answer), then 202. No phone or time normalisation, no
 * request log, no rate limit, no call state, no delivery. Started as a child process on PORT, with its SQLite
 * file at FLOOR_DB.
 */
import 'reflect-metadata';
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  BadRequestException,
  Body,
  Controller,
  Headers,
  HttpCode,
  Module,
  Post,
  UnauthorizedException,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { plainToInstance } from 'class-transformer';
import { IsIn, IsISO8601, IsOptional, IsString, Length, validateSync } from 'class-validator';
import { SqliteDatabase } from '../src/store/sqlite/sqlite-database';

class FloorEventDto {
  @IsIn(['call.started', 'call.answered', 'call.ended'])
  event!: string;

  @IsString()
  @Length(1, 128)
  callId!: string;

  @IsOptional()
  @IsIn(['inbound', 'outbound'])
  direction?: string;

  @IsOptional()
  @IsString()
  @Length(1, 32)
  phoneNumber?: string;

  @IsOptional()
  @IsString()
  @Length(1, 32)
  extension?: string;

  @IsISO8601()
  at!: string;
}

const token = createHash('sha256')
  .update(process.env.FLOOR_TOKEN ?? 'floor')
  .digest();
const database = new SqliteDatabase(process.env.FLOOR_DB ?? ':memory:');
database.connection.exec(
  'CREATE TABLE IF NOT EXISTS floor_events (call_id TEXT PRIMARY KEY, body TEXT NOT NULL)',
);
const insert = database.connection.prepare(
  'INSERT INTO floor_events (call_id, body) VALUES (?, ?) ON CONFLICT DO NOTHING',
);

@Controller('v1/calls')
class FloorController {
  @Post('events')
  @HttpCode(202)
  async events(@Headers('authorization') authorization: string | undefined, @Body() body: unknown) {
    const given = createHash('sha256')
      .update(authorization?.startsWith('Bearer ') ? authorization.slice(7) : '')
      .digest();
    if (!timingSafeEqual(given, token)) throw new UnauthorizedException();
    const dto = plainToInstance(FloorEventDto, body);
    const errors = validateSync(dto, { whitelist: true, forbidUnknownValues: true });
    if (errors.length > 0) throw new BadRequestException(errors.map((error) => error.property));
    await database.transactionSynced(() => insert.run(dto.callId, JSON.stringify(dto)));
    return { accepted: 1 };
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(FloorModule, { logger: false });
  await app.listen(Number(process.env.PORT ?? 3998), '127.0.0.1');
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

void main();
