"""What the Docker build really ships: the Dockerfile, its install scripts, and stale mirrors."""

from .mirrors import MirrorGroup, find_mirrors, line_endings_only
from .plan import Installed, ShipPlan, plan_shipping

__all__ = ["Installed", "MirrorGroup", "ShipPlan", "find_mirrors", "line_endings_only", "plan_shipping"]
