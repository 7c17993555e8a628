import { Controller, Get, Header, Inject, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/scopes.decorator.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import { DEV_TOKEN, type OrdinalConfig } from '../config/ordinal-config.js';
import { CONSOLE_PAGE } from './console.page.js';
import { CONSOLE_SCRIPT } from './console.script.js';

/**
 * The console (docs/console.md): a static page and its script; the data comes from the API
 * with the token typed into the page. In development the page comes with the development
 * token filled in (the server prints it anyway); in production with none.
 */
@ApiExcludeController()
@Controller()
export class ConsoleController {
  private readonly page: string;

  constructor(@Inject(ORDINAL_CONFIG) config: OrdinalConfig) {
    this.page = CONSOLE_PAGE.replace(
      '%%DEV_TOKEN%%',
      config.env === 'development' ? DEV_TOKEN : '',
    );
  }

  @Get()
  @Public()
  @Redirect('/console', 302)
  root(): void {}

  @Get('console')
  @Public()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header('x-frame-options', 'DENY')
  @Header(
    'content-security-policy',
    "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  )
  html(): string {
    return this.page;
  }

  @Get('console/console.js')
  @Public()
  @Header('content-type', 'text/javascript; charset=utf-8')
  @Header('cache-control', 'no-cache')
  script(): string {
    return CONSOLE_SCRIPT;
  }
}
