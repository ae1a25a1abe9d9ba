-- How a matched copy was confirmed (issue 14): the similarity that decided the match (the region key
-- similarity of a transformed copy, the pixel agreement of a geometric match; the plain pHash stays in
-- `similarity`), and, when the local-feature check confirmed it, its inlier count and the matched
-- region of each image (JSON: {"submission": {"quad": [[x, y], ...], "coverage": c}, "candidate": ...},
-- corners as fractions of the image's width and height).
ALTER TABLE evidence ADD COLUMN match_similarity REAL;
ALTER TABLE evidence ADD COLUMN match_inliers INTEGER;
ALTER TABLE evidence ADD COLUMN match_region TEXT;
