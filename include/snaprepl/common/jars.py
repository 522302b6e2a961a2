"""JDBC driver jars: the Debian packages' jars, plus any the user adds.

``SNAPREPL_JDBC_JARS`` (a ``:``-separated list) adds jars, e.g. a SQL Server or Oracle driver.
"""

from __future__ import annotations

import os
from pathlib import Path

from snaprepl.errors import SnapreplError

DEBIAN_JAR_DIR = Path("/usr/share/java")

#: Jar file name -> the Debian package that installs it.
DEBIAN_JARS = {
    "postgresql.jar": "libpostgresql-jdbc-java",
    "mariadb-java-client.jar": "libmariadb-java",
    "sqlite-jdbc.jar": "libxerial-sqlite-jdbc-java",
}

EXTRA_JARS_ENV = "SNAPREPL_JDBC_JARS"


def jdbc_jars() -> list[Path]:
    """Every JDBC driver jar snaprepl hands to Spark and JPype.

    :raises SnapreplError: when a Debian driver jar is missing, naming the package to install.
    """
    jars = []
    missing = []
    for name, package in DEBIAN_JARS.items():
        path = DEBIAN_JAR_DIR / name
        if path.exists():
            jars.append(path.resolve())
        else:
            missing.append(package)
    if missing:
        raise SnapreplError(
            f"JDBC driver jars are missing under {DEBIAN_JAR_DIR}",
            f"install them: apt-get install -y {' '.join(missing)} (scripts/setup.sh does this)",
        )
    for item in os.environ.get(EXTRA_JARS_ENV, "").split(":"):
        if item.strip():
            path = Path(item.strip())
            if not path.exists():
                raise SnapreplError(f"jar {path} named in {EXTRA_JARS_ENV} does not exist")
            jars.append(path.resolve())
    return jars
