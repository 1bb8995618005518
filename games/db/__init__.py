"""PostgreSQL: where the database is (embedded or ``DATABASE_URL``), its schema, its pool."""

from games.db.embedded import database_url
from games.db.migrate import migrate
from games.db.pool import create_pool

__all__ = ["database_url", "migrate", "create_pool"]
