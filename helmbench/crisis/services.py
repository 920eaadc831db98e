"""The crisis-service registry: its file format, reading it, and the normal form of every contact.

The registry is a YAML file in the benchmark tree (`crisis-services.yml` at its root unless an
evaluation names another), listing per country (ISO 3166-1 alpha-2 code) the crisis services a
person there can reach:

    format: 1                 # the format of this file (this module reads format 1)
    version: "2026.11"        # the data's own version: bump it with every edit
    max_age_days: 365         # a check against the service's own page older than this is stale
    countries:
      AU:
        name: Australia
        services:
          - name: Lifeline
            kind: crisis              # or emergency (000, 999, 911, …)
            phone: ["13 11 14"]
            sms: [{number: "0477 13 11 14"}]       # and `keyword:` when the service needs one
            chat: ["https://www.lifeline.org.au/crisis-support/chat/"]
            url: https://www.lifeline.org.au/
            hours: 24/7
            audience: [general]       # or youth, lgbtq, veterans, indigenous, men, …
            languages: [en]
            source: https://www.lifeline.org.au/   # the service's own page, where it was checked
            verified_on:              # the date someone checked every field against `source`
            verified_by:              # who did

An entry nobody has checked against its source keeps `verified_on` empty: lint names it (a note),
and the site shows it unverified. Numbers are written as the service publishes them; each is
validated for its country with `phonenumbers` (Google's libphonenumber metadata), never a
hand-written pattern, and compared in a normal form: E.164 for a full number (`+61131114`), the
country and digits for a short code (`AU:000`, `GB:116123`), which has no international form.
URLs are compared by host (without `www.`) and path, ignoring scheme, query and fragment.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_FILE = "crisis-services.yml"
DEFAULT_MAX_AGE = 365
MAX_BYTES = 256_000

CountryCode = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]
Url = Annotated[str, Field(pattern=r"^https?://[^\s/]+\.[^\s]+$", max_length=500)]
Text = Annotated[str, Field(min_length=1, max_length=200)]


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Sms(_Data):
    """A text-message route: the number (or short code) and the word to send, if the service needs one."""

    number: Text
    keyword: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{1,20}$")] | None = None


class Service(_Data):
    name: Text
    kind: Literal["crisis", "emergency"] = "crisis"
    phone: list[Text] = []
    sms: list[Sms] = []
    chat: list[Url] = []
    url: Url | None = None
    hours: Text | None = None
    audience: Annotated[list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,39}$")]], Field(min_length=1)] = ["general"]
    languages: list[Annotated[str, Field(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")]] = ["en"]
    source: Url = Field(description="the service's own page: where every field was checked")
    verified_on: dt.date | None = Field(None, description="when someone checked every field against `source`; "
                                                          "empty until then")
    verified_by: Text | None = None
    notes: Annotated[str, Field(max_length=500)] | None = None

    @field_validator("verified_on", "verified_by", mode="before")
    @classmethod
    def _empty(cls, v):
        return None if v == "" else v

    def serves(self, audience: str | None) -> bool:
        """Whether a person of `audience` (None: not stated) is who this service is for."""
        return self.kind == "emergency" or "general" in self.audience or (audience is not None and audience in self.audience)


class Country(_Data):
    name: Text
    services: Annotated[list[Service], Field(min_length=1)]


class RegistryFile(_Data):
    """A crisis-service registry (crisis-services.yml)."""

    format: Literal[1] = Field(description="the format of this file")
    version: Annotated[str, Field(min_length=1, max_length=200)] = Field(description="the data's own version")
    max_age_days: Annotated[int, Field(ge=1, le=3650)] = Field(
        DEFAULT_MAX_AGE, description="a verification older than this many days is stale")
    countries: dict[CountryCode, Country]

    @field_validator("version", mode="before")
    @classmethod
    def _as_text(cls, v):
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


# --- normal forms -----------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def phone_key(text: str, country: str) -> str | None:
    """The normal form of a number written as `text` for `country`: E.164 for a full number, `CC:digits`
    for a short code; None when libphonenumber knows it as neither for that country (a `+` number is
    read in its own country). libphonenumber is imported here, not at module level: `helmbench lint`
    loads this plugin at start-up, and a tree without a registry should not pay for its metadata."""
    import phonenumbers
    from phonenumbers import shortnumberinfo

    try:
        number = phonenumbers.parse(text, country)
    except phonenumbers.NumberParseException:
        return None
    region = phonenumbers.region_code_for_number(number) or country
    if phonenumbers.is_valid_number(number):
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    if shortnumberinfo.is_valid_short_number(number):
        return f"{region}:{phonenumbers.national_significant_number(number)}"
    return None


# Codes people use that ISO 3166-1 does not (the registry and user contexts use ISO 3166-1 alpha-2).
NOT_ISO = {"UK": "GB", "EL": "GR", "EN": "GB", "UAE": "AE"}

# libphonenumber's number types no crisis line publishes: the caller pays a premium, or the number
# follows a person, a pager or a mailbox rather than a service.
NON_CRISIS_TYPES = {"PREMIUM_RATE": "a premium-rate number", "PAGER": "a pager number",
                    "VOICEMAIL": "a voicemail number", "PERSONAL_NUMBER": "a personal (follow-me) number"}


def is_country(code: str) -> bool:
    """`code` is an ISO 3166-1 alpha-2 code libphonenumber has metadata for (`GB`, not `UK`)."""
    import phonenumbers

    return code in phonenumbers.SUPPORTED_REGIONS


def country_hint(code: str) -> str:
    """What to write instead of a country code that is not ISO 3166-1 alpha-2."""
    right = NOT_ISO.get(code.upper())
    if right:
        return f"`{code}` is not an ISO 3166-1 alpha-2 code: write `{right}`"
    return f"`{code}` is not an ISO 3166-1 alpha-2 code (AU, CA, GB, IE, NZ, US, …)"


def number_problem(text: str, country: str) -> tuple[str, str] | None:
    """(code, what is wrong) when `text` is not a number a crisis service of `country` could publish:
    RES102 when libphonenumber does not know it as a number or short code *of that country* (a `+1`
    number under AU is the United States'), RES107 when it is a premium-rate (or pager, voicemail,
    personal) number; None when it is fine."""
    import phonenumbers
    from phonenumbers import shortnumberinfo

    try:
        number = phonenumbers.parse(text, country)
    except phonenumbers.NumberParseException:
        return "RES102", f"is not a valid number or short code for {country}"
    if phonenumbers.is_valid_number(number):
        if not phonenumbers.is_valid_number_for_region(number, country):
            other = phonenumbers.region_code_for_number(number) or "another country"
            return "RES102", f"is a number of {other}, not of {country}"
        kind = phonenumbers.number_type(number)
        name = next((n for n in NON_CRISIS_TYPES if getattr(phonenumbers.PhoneNumberType, n) == kind), None)
        return ("RES107", f"is {NON_CRISIS_TYPES[name]}, which no crisis line of {country} uses") if name else None
    if shortnumberinfo.is_valid_short_number_for_region(number, country):
        if shortnumberinfo.expected_cost_for_region(number, country) == shortnumberinfo.ShortNumberCost.PREMIUM_RATE:
            return "RES107", f"is a premium-rate short number, which no crisis line of {country} uses"
        return None
    return "RES102", f"is not a valid number or short code for {country}"


@lru_cache(maxsize=4096)
def digit_forms(key: str) -> frozenset[str]:
    """The digit strings a person may write the registry number `key` as (E.164 without `+`, national
    with and without its prefix; a short code's digits): a cheap first look at a reply's digit runs,
    before libphonenumber reads the ones worth reading."""
    if not key.startswith("+"):
        return frozenset({key.partition(":")[2]})
    import phonenumbers

    number = phonenumbers.parse(key)
    nsn = phonenumbers.national_significant_number(number)
    national = re.sub(r"\D", "", phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL))
    return frozenset({f"{number.country_code}{nsn}", nsn, national})


def url_key(url: str) -> str | None:
    """`host/path` in lower case, without `www.`, scheme, query, fragment or trailing slash."""
    raw = url.strip()
    if "://" not in raw:
        raw = "https://" + raw
    try:
        parts = urlsplit(raw)
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if not host or "." not in host:
        return None
    host = host.removeprefix("www.")
    path = re.sub(r"/+$", "", parts.path or "")
    return f"{host}{path.lower()}"


def url_matches(found: str, listed: str) -> bool:
    """A URL in a reply is the listed one when it has the same host and its path starts with the listed path."""
    host, _, path = found.partition("/")
    lhost, _, lpath = listed.partition("/")
    return host == lhost and (not lpath or path == lpath or path.startswith(lpath + "/"))


# --- reading --------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _parsed(path: str, mtime_ns: int, size: int) -> RegistryFile:
    from helmbench.plugin_api import load_yaml

    data, _ = load_yaml(Path(path).read_text(encoding="utf-8"))
    return RegistryFile.model_validate(data)


def read_registry(path: Path) -> RegistryFile:
    """The registry at `path` (validated; lint has reported its problems already), cached while unchanged.
    Raises ValueError (or the YAML/validation error) when it cannot be used."""
    st = path.stat()
    if st.st_size > MAX_BYTES:
        raise ValueError(f"{path.name} is over {MAX_BYTES:,} bytes")
    return _parsed(str(path), st.st_mtime_ns, st.st_size)


def contacts_of(country: str, service: Service) -> dict:
    """A service's contacts in normal form, as the manifest carries them (invalid numbers left out: lint
    refuses them)."""
    phones = [k for k in (phone_key(p, country) for p in service.phone) if k]
    sms = [{"number": k, "keyword": s.keyword.upper() if s.keyword else None}
           for s in service.sms if (k := phone_key(s.number, country))]
    urls = [k for k in (url_key(u) for u in [*([service.url] if service.url else []), *service.chat]) if k]
    return {"country": country, "name": service.name, "kind": service.kind, "audience": list(service.audience),
            "phones": sorted(set(phones)), "sms": sms, "urls": sorted(set(urls))}


def as_of_today() -> dt.date:
    return dt.date.today()
