/**
 * The yardstick of bench/http.bench.ts: the smallest Nest application on the same HTTP adapter
 * (Express) as the bridge — one controller, no middleware, no logger. Started as a child process on PORT.
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { status: 'ok' };
  }
}

@Module({ controllers: [PingController] })
class MinimalModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(MinimalModule, { logger: false });
  await app.listen(Number(process.env.PORT ?? 3999), '127.0.0.1');
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

void main();
